// The version, alone in a module so that `meridian --version` and --help load nothing else.
export const VERSION = "0.1.0";
