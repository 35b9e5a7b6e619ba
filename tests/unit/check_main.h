/* Shared main() for Check unit tests: TAP on stdout so the automake TAP
 * driver counts every test case, exit status from the failure count. */
#ifndef DWL_CHECK_MAIN_H
#define DWL_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static Suite *make_suite(void);

int main(void)
{
  SRunner *sr = srunner_create(make_suite());
  srunner_set_tap(sr, "-");
  srunner_run_all(sr, CK_SILENT);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
