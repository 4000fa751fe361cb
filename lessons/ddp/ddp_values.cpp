// The data-parallel lesson values: to_json is generated in the header (DLSYS_VALUES_TO_JSON).
#include "lessons/ddp/ddp_values.h"

#include "engine/json_read.h"
