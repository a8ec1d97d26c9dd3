#pragma once
/* cordon changes | apply | discard (verb) DIR ... */
int cmd_changes(const char *verb, int argc, char **argv);
