// The README's C++ example: 2x2 max pooling of a 4x4 map with a 1-byte argmax, then the backward.
#include <cstdio>
#include <poolkit/poolkit.hpp>

int main() {
  using namespace poolkit;
  float x[16] = {1, 3, 2, 4, 5, 6, 1, 2, 7, 2, 3, 1, 4, 8, 5, 6};
  float y[4], dy[4] = {1, 1, 1, 1}, dx[16];
  uint8_t argmax[4];  // window-local: which of the 4 cells won

  Geometry g = torch_geometry({4, 4}, /*kernel*/ {2}, /*stride*/ {2}, /*padding*/ {0}, /*dilation*/ {1}, false);
  TensorView xv(x, DType::f32, {1, 1, 4, 4}), yv(y, DType::f32, {1, 1, 2, 2});
  TensorView av(argmax, DType::u8, {1, 1, 2, 2});
  max_pool_forward(g, xv, yv, av);
  max_pool_backward(g, TensorView(dy, DType::f32, {1, 1, 2, 2}), av, {}, TensorView(dx, DType::f32, {1, 1, 4, 4}));

  std::printf("y = [[%g, %g], [%g, %g]]\n", y[0], y[1], y[2], y[3]);  // [[6, 4], [8, 6]]
  int winners = 0;
  for (float v : dx) winners += v == 1;
  std::printf("cells receiving gradient: %d of 16\n", winners);  // 4
  return y[0] == 6 && y[1] == 4 && y[2] == 8 && y[3] == 6 && winners == 4 ? 0 : 1;
}
