/* libFuzzer target: cordon mcp's JSON-RPC reader (lib/jsonrpc.c): the
 * input is fed to the line reader in two pieces (a first byte says where it
 * is cut), each line it gives is checked as a message and answered, as
 * cordon mcp does with its standard input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut = data[0] % size;
	struct jrpc_reader r = {.max = 512};
	const char *in = (const char *)data + 1;
	size_t n = size - 1, pieces[2] = {cut < n ? cut : n, n - (cut < n ? cut : n)};
	for (int p = 0; p < 2; p++) {
		if (jrpc_reader_push(&r, in, pieces[p]) < 0)
			break;
		in += pieces[p];
		const char *line;
		size_t len;
		int k;
		while ((k = jrpc_reader_next(&r, &line, &len)) != JRPC_NONE) {
			if (k != JRPC_LINE)
				continue;
			struct jrpc_msg m;
			int code = 0;
			cordon_error err;
			char *out = jrpc_parse(line, len, &m, &code, &err) < 0 ? jrpc_error_line(m.id, code, err.msg)
									  : jrpc_result_line(m.id, "{}");
			free(out);
			jrpc_msg_free(&m);
		}
	}
	jrpc_reader_free(&r);
	return 0;
}
