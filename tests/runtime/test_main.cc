// Test entry: also fails the run if the validation layer reported anything outside a test.
#include <gtest/gtest.h>

#include <cstdio>

#include "vkml/device.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  if (vkml::validation_message_count() > 0) {
    std::fprintf(stderr, "vkml: %llu validation message(s) during the run\n",
                 static_cast<unsigned long long>(vkml::validation_message_count()));
    return 1;
  }
  return rc;
}
