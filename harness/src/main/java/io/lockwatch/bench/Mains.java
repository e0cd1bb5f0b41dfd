package io.lockwatch.bench;

/**
 * What every benchmark's {@code main} does: parse its options (on a bad one, say why and the usage, exit 2), run,
 * and exit with the run's status (1 if it failed with an exception).
 */
final class Mains {

    interface Parser<O> {
        O parse(String[] args);
    }

    interface Run<O> {
        int run(O options) throws Exception;
    }

    private Mains() {
    }

    static <O> void run(String[] args, Parser<O> parser, String usage, Run<O> run) {
        O options;
        try {
            options = parser.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(usage);
            System.exit(2);
            return;
        }
        int rc;
        try {
            rc = run.run(options);
        } catch (Exception e) {
            System.err.println("[bench] failed: " + e);
            e.printStackTrace();
            rc = 1;
        }
        System.exit(rc);
    }
}
