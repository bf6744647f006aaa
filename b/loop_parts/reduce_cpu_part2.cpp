#define JIASU_LOOP_PART 2
#include "ops/reduce_cpu_part.cpp"
