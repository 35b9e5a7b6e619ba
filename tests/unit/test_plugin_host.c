#include "check_main.h"
static Suite *make_suite(void) { return suite_create("x"); }
