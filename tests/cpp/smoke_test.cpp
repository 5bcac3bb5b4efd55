#include <gtest/gtest.h>
#include "poolkit/poolkit.hpp"
TEST(Smoke, Builds) { SUCCEED(); }
