/* libFuzzer target: the ledger sweep over arbitrary event lists. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ledger_event ev[64];
	char names[64][4];
	size_t n = 0;
	for (size_t i = 0; i + 2 < size && n < 64; i += 3, n++) {
		snprintf(names[n], sizeof(names[n]), "b%u", data[i] % 8);
		ev[n] = (struct ledger_event){(data[i] & 0x80) != 0, names[n],
					      (uint64_t)data[i + 1] << (data[i + 2] % 64), 1, (int)i};
	}
	struct ledger l = {ev, n};
	struct ledger_result r;
	cordon_error e;
	if (ledger_compute(&l, "fuzz", &r, &e) == 0)
		ledger_result_free(&r);
	return 0;
}
