package dev.locksmith.jobs;

/** The default codec, chosen once by what the class path has. */
final class Codecs {

    static final JobCodec STANDARD = jacksonPresent() ? JacksonJobCodec.standard() : new Missing();

    private Codecs() {}

    private static boolean jacksonPresent() {
        try {
            Class.forName("com.fasterxml.jackson.databind.ObjectMapper", false, Codecs.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Stands in for Jackson when it is not there: every call says what to do. */
    static final class Missing implements JobCodec {
        private static final String WHY = "typed jobs need a JobCodec: the default one uses Jackson, and "
                + "com.fasterxml.jackson.core:jackson-databind is not on the class path; add it (with "
                + "jackson-datatype-jsr310 for java.time types), or pass your own codec to "
                + "JobQueueConfig.builder().codec(...) and JobHandlers.builder().codec(...)";

        @Override
        public String encode(Object payload) {
            throw new IllegalStateException(WHY);
        }

        @Override
        public <T> T decode(String json, Class<T> type) {
            throw new IllegalStateException(WHY);
        }

        @Override
        public String toString() {
            return "JobCodec (none: Jackson is not on the class path)";
        }
    }
}
