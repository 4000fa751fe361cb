// The doctest runner lives alone: this translation unit is slow to compile and never changes.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
