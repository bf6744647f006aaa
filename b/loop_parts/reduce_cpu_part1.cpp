#define JIASU_LOOP_PART 1
#include "ops/reduce_cpu_part.cpp"
