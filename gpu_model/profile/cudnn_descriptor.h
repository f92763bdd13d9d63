// A cuDNN backend descriptor as the program built it: its type and every attribute it
// set, kept as set (element type, element count, bytes), so that a GetAttribute returns
// exactly what a SetAttribute stored.  The simulator's interposer keeps one per
// descriptor it hands out; the recorder keeps a shadow of each real one, to name its
// executes the same way (cudnn_call_signature.h).  A descriptor-valued attribute holds
// the other descriptors' handles and keeps what they stand for alive: cudnn-frontend
// destroys a pointwise or convolution descriptor once the operation using it is built,
// as cuDNN allows, and the graph must still be read through it.
#pragma once

#include <cstdint>
#include <cstring>
#include <cudnn_graph.h>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace phantora::cudnn
{

struct AttributeValue
{
    cudnnBackendAttributeType_t type{CUDNN_TYPE_INT64};
    int64_t count{0};
    std::vector<uint8_t> bytes;
};

/// Bytes of one element of \p type; 0 for a type this build does not know.
std::size_t ElementSize(cudnnBackendAttributeType_t type);

class BackendDescriptor;
/// The descriptor behind a handle the program passes in a descriptor-valued attribute,
/// shared so that it outlives the program's destroy of that handle; nullptr if none.
using DescriptorResolver =
    std::function<std::shared_ptr<const BackendDescriptor>(const void* handle)>;

class BackendDescriptor
{
public:
    explicit BackendDescriptor(cudnnBackendDescriptorType_t type) : m_type(type) {}

    cudnnBackendDescriptorType_t Type() const { return m_type; }
    bool Finalized() const { return m_finalized; }
    void SetFinalized(bool f) { m_finalized = f; }

    /// Stores \p count elements of \p type; false (nothing stored) for an element type of
    /// unknown size, a negative count, or a descriptor handle \p resolve does not know.
    bool Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
             const void* elements, const DescriptorResolver& resolve = {});
    /// Stores \p values, for attributes the simulator answers itself.
    template <class T>
    void SetValues(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                   const std::vector<T>& values)
    {
        Set(name, type, static_cast<int64_t>(values.size()), values.data());
    }
    const AttributeValue* Find(cudnnBackendAttributeName_t name) const;

    /// The elements of \p name as T when they were set with T's size; empty otherwise.
    template <class T> std::vector<T> Values(cudnnBackendAttributeName_t name) const
    {
        const AttributeValue* v = Find(name);
        if (!v || v->count <= 0 ||
            v->bytes.size() != sizeof(T) * static_cast<std::size_t>(v->count))
        {
            return {};
        }
        std::vector<T> out(static_cast<std::size_t>(v->count));
        std::memcpy(out.data(), v->bytes.data(), v->bytes.size());
        return out;
    }
    /// The first element of \p name as T (also for bool, which Values cannot hold).
    template <class T> std::optional<T> Value(cudnnBackendAttributeName_t name) const
    {
        const AttributeValue* v = Find(name);
        if (!v || v->count <= 0 ||
            v->bytes.size() != sizeof(T) * static_cast<std::size_t>(v->count))
        {
            return std::nullopt;
        }
        T out;
        std::memcpy(&out, v->bytes.data(), sizeof(T));
        return out;
    }
    std::vector<int64_t> Int64s(cudnnBackendAttributeName_t name) const
    {
        return Values<int64_t>(name);
    }
    /// The handles of a descriptor-valued attribute.
    std::vector<void*> Descriptors(cudnnBackendAttributeName_t name) const
    {
        return Values<void*>(name);
    }
    /// A 4-byte enumeration (modes, data types, notes).
    template <class E> std::optional<E> Enum(cudnnBackendAttributeName_t name) const
    {
        static_assert(sizeof(E) == 4);
        return Value<E>(name);
    }

    const std::map<cudnnBackendAttributeName_t, AttributeValue>& Attributes() const
    {
        return m_attributes;
    }

    /// The descriptor behind \p handle among those this one's attributes refer to (as it
    /// was when they were set: the program may have destroyed it, or, in the recorder,
    /// the real library handed its address out again since); nullptr if none.
    const BackendDescriptor* Resolve(const void* handle) const;

private:
    cudnnBackendDescriptorType_t m_type;
    bool m_finalized{false};
    std::map<cudnnBackendAttributeName_t, AttributeValue> m_attributes;
    std::map<const void*, std::shared_ptr<const BackendDescriptor>> m_references;
};

} // namespace phantora::cudnn
