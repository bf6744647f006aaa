#define JIASU_LOOP_PART 4
#include "ops/reduce_cpu_part.cpp"
