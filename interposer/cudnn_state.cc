#include "cudnn_state.h"

#include <map>
#include <memory>
#include <mutex>

namespace phantora::interposer::cudnn_state
{

namespace
{

/// Objects the program holds by address.  The tables are built on first use and never
/// destroyed (the program may still release a handle from a static destructor at exit).
template <class T> class Owned
{
public:
    template <class... Args> T* Create(Args&&... args)
    {
        auto item = std::make_shared<T>(std::forward<Args>(args)...);
        T* p = item.get();
        std::lock_guard lock(m_mutex);
        m_items.emplace(p, std::move(item));
        return p;
    }
    std::shared_ptr<T> Share(const void* handle)
    {
        std::lock_guard lock(m_mutex);
        auto it = m_items.find(handle);
        return it == m_items.end() ? nullptr : it->second;
    }
    T* Find(const void* handle) { return Share(handle).get(); }
    bool Destroy(const void* handle)
    {
        std::lock_guard lock(m_mutex);
        return m_items.erase(handle) > 0;
    }

private:
    std::mutex m_mutex;
    std::map<const void*, std::shared_ptr<T>> m_items;
};

Owned<cudnnContext>& Handles()
{
    static auto* table = new Owned<cudnnContext>;
    return *table;
}

Owned<BackendObject>& Backends()
{
    static auto* table = new Owned<BackendObject>;
    return *table;
}

Owned<cudnnTensorStruct>& Tensors()
{
    static auto* table = new Owned<cudnnTensorStruct>;
    return *table;
}

thread_local std::string t_lastError;

} // namespace

void SetLastError(std::string message)
{
    t_lastError = std::move(message);
}

const std::string& LastError()
{
    return t_lastError;
}

cudnnContext* CreateHandle()
{
    return Handles().Create();
}

cudnnContext* FindHandle(cudnnHandle_t handle)
{
    return Handles().Find(handle);
}

bool DestroyHandle(cudnnHandle_t handle)
{
    return Handles().Destroy(handle);
}

BackendObject* CreateBackend(cudnnBackendDescriptorType_t type)
{
    return Backends().Create(type);
}

BackendObject* FindBackend(const void* handle)
{
    return Backends().Find(handle);
}

bool DestroyBackend(const void* handle)
{
    return Backends().Destroy(handle);
}

std::shared_ptr<const cudnn::BackendDescriptor> ShareBackend(const void* handle)
{
    std::shared_ptr<BackendObject> o = Backends().Share(handle);
    return o ? std::shared_ptr<const cudnn::BackendDescriptor>(o, &o->descriptor) : nullptr;
}

const BackendObject* Referenced(const BackendObject& referrer, cudnnBackendAttributeName_t name)
{
    const auto handles = referrer.descriptor.Descriptors(name);
    const cudnn::BackendDescriptor* d =
        handles.empty() ? nullptr : referrer.descriptor.Resolve(handles.front());
    // The handle is the object's address, and the attribute keeps the object alive.
    return d ? static_cast<const BackendObject*>(handles.front()) : nullptr;
}

cudnnTensorStruct* CreateTensor()
{
    return Tensors().Create();
}

cudnnTensorStruct* FindTensor(const void* handle)
{
    return Tensors().Find(handle);
}

bool DestroyTensor(const void* handle)
{
    return Tensors().Destroy(handle);
}

} // namespace phantora::interposer::cudnn_state
