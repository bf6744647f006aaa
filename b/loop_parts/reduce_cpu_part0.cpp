#define JIASU_LOOP_PART 0
#include "ops/reduce_cpu_part.cpp"
