#define JIASU_LOOP_PART 5
#include "ops/reduce_cpu_part.cpp"
