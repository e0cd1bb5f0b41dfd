package io.lockwatch.api;

/**
 * An answer other than success, rendered as {@code application/problem+json} (RFC 9457).
 *
 * @param field the request field that is wrong, or null
 */
public class ApiProblem extends RuntimeException {

    private final int status;
    private final String title;
    private final String field;
    private final java.util.List<String> errors;

    public ApiProblem(int status, String title, String detail, String field) {
        this(status, title, detail, field, java.util.List.of());
    }

    private ApiProblem(int status, String title, String detail, String field, java.util.List<String> errors) {
        super(detail);
        this.status = status;
        this.title = title;
        this.field = field;
        this.errors = errors;
    }

    /** A 400 with every way the request is wrong (a file's rows), each its own line in {@code errors}. */
    public static ApiProblem badRequest(String detail, java.util.List<String> errors) {
        return new ApiProblem(400, "Bad request", detail, null, java.util.List.copyOf(errors));
    }

    /** A 403 for what the caller may not do, with each thing refused its own line in {@code errors}. */
    public static ApiProblem forbidden(String detail, java.util.List<String> errors) {
        return new ApiProblem(403, "Forbidden", detail, null, java.util.List.copyOf(errors));
    }

    /** What every refusal of a body that does not parse as JSON says, whichever step found it. */
    static final String NOT_JSON = "the request body is not valid JSON";

    /** A 400 for a body that does not parse as JSON. */
    static ApiProblem notJson() {
        return badRequest(null, NOT_JSON);
    }

    public static ApiProblem badRequest(String field, String detail) {
        return new ApiProblem(400, "Bad request", detail, field);
    }

    public static ApiProblem notFound(String what) {
        return new ApiProblem(404, "Not found", what + " does not exist", null);
    }

    public static ApiProblem conflict(String detail) {
        return new ApiProblem(409, "Conflict", detail, null);
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }

    public String field() {
        return field;
    }

    public java.util.List<String> errors() {
        return errors;
    }
}
