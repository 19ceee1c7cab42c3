/* `trainc COMMAND --help`: the usage, options and exit status of each command. */
#ifndef TRAINC_CLI_HELP_H
#define TRAINC_CLI_HELP_H

/* 1 if an argument asks for help (--help or -h). */
int cli_wants_help(int argc, char **argv);
/* The command's help text, or NULL when there is no such command. */
const char *cli_command_help(const char *command);

#endif
