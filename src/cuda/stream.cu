#include "stream.hpp"

namespace poolkit::cuda {
namespace {
thread_local void* g_stream = nullptr;
}  // namespace

void set_stream(void* stream) { g_stream = stream; }
void* current_stream() { return g_stream; }

}  // namespace poolkit::cuda
