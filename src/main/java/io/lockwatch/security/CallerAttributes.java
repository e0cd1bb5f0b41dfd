package io.lockwatch.security;

/**
 * What the doors learnt of a request's caller, as request attributes for whatever comes after them (the API, the
 * audit log): its name, its kind, and for a person signed in at the identity provider, the provider's subject.
 */
public final class CallerAttributes {

    /** The caller's name: a token's, a client key's ({@code client-key-<id>}), a device's login, a person's. */
    public static final String NAME = io.lockwatch.selfservice.ClientKeys.CALLER_ATTRIBUTE;
    /** {@code full-token}, {@code read-token}, {@code client-key}, {@code device} or {@code person}. */
    public static final String KIND = "io.lockwatch.caller.kind";
    /** Boolean: whether the caller may change things as an operator (a full token, a person with the operator role). */
    public static final String OPERATOR = "io.lockwatch.caller.operator";
    /** A person's subject at the identity provider ({@code sub}). */
    public static final String SUBJECT = "io.lockwatch.caller.subject";

    private CallerAttributes() {
    }
}
