/* A C kernel that finds tensors through the header planner-build generates: region (arena)
 * and offset, never a pointer it was handed per tensor. */
#include <stdint.h>
#include "planner_hello_world.h"

/* Tensor `T`'s elements, typed as the header says: its region's base plus its offset. `T` is
 * a tensor's macro prefix, such as PLANNER_HELLO_WORLD_T_SEQUENTIAL_DENSE_1_MAT_MUL. */
#define TENSOR(regions, T) ((const T##_TYPE *)((regions)[T##_REGION] + T##_OFFSET))

/* The sum of `n` int8 elements. */
static int64_t sum_i8(const int8_t *x, uint32_t n) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += x[i];
    }
    return sum;
}

/* Sums the hidden layer dense_1's weights, read from their runtime copy (staged into DTCM). */
int64_t host_c_sum_dense_1_weights(uint8_t *const *regions) {
    return sum_i8(TENSOR(regions, PLANNER_HELLO_WORLD_T_SEQUENTIAL_DENSE_1_MAT_MUL),
                  PLANNER_HELLO_WORLD_T_SEQUENTIAL_DENSE_1_MAT_MUL_ELEMENTS);
}

/* Sums the model's input tensor in the scratch arena. */
int64_t host_c_sum_input(uint8_t *const *regions) {
    return sum_i8(TENSOR(regions, PLANNER_HELLO_WORLD_INPUT_SERVING_DEFAULT_DENSE_INPUT_0),
                  PLANNER_HELLO_WORLD_INPUT_SERVING_DEFAULT_DENSE_INPUT_0_ELEMENTS);
}

/* What the header says, for the Rust side to compare with its own plan. */
uint64_t host_c_plan_hash(void) { return PLANNER_HELLO_WORLD_PLAN_HASH; }

uint32_t host_c_region_count(void) { return PLANNER_HELLO_WORLD_REGION_COUNT; }

uint32_t host_c_tensor_offset(uint32_t which) {
    switch (which) {
    case 0: return PLANNER_HELLO_WORLD_T_SEQUENTIAL_DENSE_1_MAT_MUL_OFFSET;
    case 1: return PLANNER_HELLO_WORLD_INPUT_SERVING_DEFAULT_DENSE_INPUT_0_OFFSET;
    default: return UINT32_MAX;
    }
}

uint32_t host_c_tensor_size(uint32_t which) {
    switch (which) {
    case 0: return PLANNER_HELLO_WORLD_T_SEQUENTIAL_DENSE_1_MAT_MUL_SIZE;
    case 1: return PLANNER_HELLO_WORLD_INPUT_SERVING_DEFAULT_DENSE_INPUT_0_SIZE;
    default: return UINT32_MAX;
    }
}
