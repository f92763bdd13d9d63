#include "cudnn_descriptor.h"

namespace phantora::cudnn
{

std::size_t ElementSize(cudnnBackendAttributeType_t type)
{
    switch (type)
    {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return sizeof(void*);
    case CUDNN_TYPE_BOOLEAN:
        return sizeof(bool);
    case CUDNN_TYPE_INT64:
        return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT:
        return sizeof(float);
    case CUDNN_TYPE_DOUBLE:
        return sizeof(double);
    case CUDNN_TYPE_CHAR:
        return sizeof(char);
    case CUDNN_TYPE_FRACTION:
        return sizeof(cudnnFraction_t);
    case CUDNN_TYPE_INT32:
    case CUDNN_TYPE_DATA_TYPE:
    case CUDNN_TYPE_CONVOLUTION_MODE:
    case CUDNN_TYPE_HEUR_MODE:
    case CUDNN_TYPE_KNOB_TYPE:
    case CUDNN_TYPE_NAN_PROPOGATION:
    case CUDNN_TYPE_NUMERICAL_NOTE:
    case CUDNN_TYPE_LAYOUT_TYPE:
    case CUDNN_TYPE_ATTRIB_NAME:
    case CUDNN_TYPE_POINTWISE_MODE:
    case CUDNN_TYPE_GENSTATS_MODE:
    case CUDNN_TYPE_BN_FINALIZE_STATS_MODE:
    case CUDNN_TYPE_REDUCTION_OPERATOR_TYPE:
    case CUDNN_TYPE_BEHAVIOR_NOTE:
    case CUDNN_TYPE_TENSOR_REORDERING_MODE:
    case CUDNN_TYPE_RESAMPLE_MODE:
    case CUDNN_TYPE_PADDING_MODE:
    case CUDNN_TYPE_SIGNAL_MODE:
    case CUDNN_TYPE_NORM_MODE:
    case CUDNN_TYPE_NORM_FWD_PHASE:
    case CUDNN_TYPE_RNG_DISTRIBUTION:
    case CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE:
        return 4; // C enumerations and int32_t
    }
    return 0;
}

bool BackendDescriptor::Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            int64_t count, const void* elements, const DescriptorResolver& resolve)
{
    const std::size_t size = ElementSize(type);
    if (size == 0 || count < 0 || (count > 0 && !elements))
    {
        return false;
    }
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR && resolve)
    {
        std::vector<std::pair<const void*, std::shared_ptr<const BackendDescriptor>>> kept;
        for (int64_t i = 0; i < count; ++i)
        {
            const void* handle = static_cast<void* const*>(elements)[i];
            auto d = resolve(handle);
            if (!d)
            {
                return false;
            }
            kept.emplace_back(handle, std::move(d));
        }
        for (auto& [handle, d] : kept)
        {
            m_references.insert_or_assign(handle, std::move(d));
        }
    }
    AttributeValue v;
    v.type = type;
    v.count = count;
    v.bytes.resize(size * static_cast<std::size_t>(count));
    if (count > 0)
    {
        std::memcpy(v.bytes.data(), elements, v.bytes.size());
    }
    m_attributes[name] = std::move(v);
    return true;
}

const AttributeValue* BackendDescriptor::Find(cudnnBackendAttributeName_t name) const
{
    auto it = m_attributes.find(name);
    return it == m_attributes.end() ? nullptr : &it->second;
}

const BackendDescriptor* BackendDescriptor::Resolve(const void* handle) const
{
    auto it = m_references.find(handle);
    return it == m_references.end() ? nullptr : it->second.get();
}

} // namespace phantora::cudnn
