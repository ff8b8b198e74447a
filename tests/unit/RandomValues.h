// Random test values (monodc/reference/RandomValues.h) under the names the
// numerics tests use.
#ifndef MONODC_TESTS_RANDOMVALUES_H
#define MONODC_TESTS_RANDOMVALUES_H

#include "monodc/reference/RandomValues.h"

namespace monodc::testing {
using reference::normalValues;
using reference::uniformValues;
} // namespace monodc::testing

#endif
