# CMake generated Testfile for 
# Source directory: /tmp/wt-sm
# Build directory: /tmp/wt-sm/b
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/tmp/wt-sm/b/core_tests[1]_include.cmake")
