// Intentionally empty: a library whose only content is its soname and its
// dependency on libphantora_interposer.so (see torch_stub_sonames.cmake).
