#define JIASU_LOOP_PART 3
#include "ops/reduce_cpu_part.cpp"
