#define JIASU_LOOP_PART 6
#include "ops/reduce_cpu_part.cpp"
