/* launch.h — the `tilescale launch` command (cli/launch.c), called by the CLI's dispatch. */
#ifndef TS_CLI_LAUNCH_H
#define TS_CLI_LAUNCH_H

/* The whole subcommand: argv[0] is "launch" (or anything), options and the program follow.
 * Returns the process exit code. */
int cmd_launch(int argc, char **argv);

#endif
