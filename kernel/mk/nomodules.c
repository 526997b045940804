/* The boot-module table of a kernel built without user programs (an ISA
 * whose user side is not built yet): no modules, so mk_start has no init
 * to start and says so. A build with user programs links the table
 * user/gen_modules.py generates instead. */
#include "mk.h"

const struct boot_module boot_modules[1];
const int nboot_modules = 0;
