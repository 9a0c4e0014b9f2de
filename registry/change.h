/* What a reload compares (docs/supervision.md): a service changed when its entry, or any code, library,
 * data or group entry it reaches by reference, differs in content between two snapshots.
 * Policies are not compared: a policy change takes effect without a restart. */
#ifndef STEWARD_CHANGE_H
#define STEWARD_CHANGE_H

#include <stdbool.h>

#include "registry.h"

/* Service old_i of `old` against service new_i of `new` (same id). */
bool sw_service_changed(const sw_registry *old, size_t old_i, const sw_registry *new, size_t new_i);

#endif
