#pragma once
int cmd_explain(int argc, char **argv);
