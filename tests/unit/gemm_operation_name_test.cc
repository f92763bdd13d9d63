// cuBLAS operations as GEMM signatures name them, and read back.
#include "cuda_abi/cuda_type_names.h"
#include "gpu_model/profile/gemm_signature.h"

#include <gtest/gtest.h>
#include <string>

using phantora::interposer::GemmOperationName;
using phantora::profile::GemmSignature;

TEST(GemmOperationName, NamesNoTransposeTransposeAndConjugateTranspose)
{
    EXPECT_STREQ(GemmOperationName(CUBLAS_OP_N, CUDA_R_16BF), "N");
    EXPECT_STREQ(GemmOperationName(CUBLAS_OP_T, CUDA_R_16BF), "T");
    EXPECT_STREQ(GemmOperationName(CUBLAS_OP_C, CUDA_C_32F), "C");
    EXPECT_STREQ(GemmOperationName(CUBLAS_OP_T, CUDA_C_32F), "T");
}

TEST(GemmOperationName, ConjugateTransposeOfRealDataIsTheTransposeItsKeysWereRecordedAs)
{
    for (cudaDataType t : {CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F, CUDA_R_64F, CUDA_R_8I})
    {
        EXPECT_STREQ(GemmOperationName(CUBLAS_OP_C, t), GemmOperationName(CUBLAS_OP_T, t));
    }
}

TEST(GemmOperationName, SignaturesWithAConjugateTransposeParseAndRoundTrip)
{
    const std::string name = "cublasGemmEx(m=64,n=32,k=16,op=CN,a=other,b=other,c=other,batch=1)";
    const auto g = GemmSignature::Parse(name);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->opA, 'C');
    EXPECT_EQ(g->opB, 'N');
    EXPECT_EQ(g->Name(), name);
    EXPECT_FALSE(GemmSignature::Parse("cublasGemmEx(m=1,n=1,k=1,op=XN,a=f32,b=f32,c=f32,batch=1)"));
}
