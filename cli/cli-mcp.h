/* cordon mcp (cli/mcp.c). */
#pragma once
int cmd_mcp(int argc, char **argv);
const char *cli_mcp_usage(void);
