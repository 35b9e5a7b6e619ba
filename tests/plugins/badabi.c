/* A plugin built for a future major ABI: the host must refuse it. */
#include "dwload/plugin.h"

static const dwl_plugin desc = {
  .abi_version = (uint32_t)(((DWL_ABI_MAJOR + 1) << 16) | 0),
  .size = sizeof(dwl_plugin),
  .name = "badabi",
  .version = "0",
  .kind = DWL_PLUGIN_SOURCE,
};

const dwl_plugin *dwl_plugin_entry(const dwl_host *host)
{
  (void)host;
  return &desc;
}
