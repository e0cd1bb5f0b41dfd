package io.lockwatch.security;

import io.lockwatch.selfservice.ClientKeys;

/**
 * Who presents a bearer token at a door outside Spring Security's chain (the feed listener): the same tokens and keys,
 * checked the same way, as the API's.
 */
public interface Bearers {

    /**
     * @param authorization the request's {@code Authorization} header, null if none
     * @return who holds the bearer token, or null for none or one that is not valid
     * @throws org.springframework.security.authentication.AuthenticationServiceException if client keys cannot be
     *         checked now (the registry is away)
     */
    Bearer who(String authorization);

    /**
     * @param name      the caller as the log names it (never the token)
     * @param clientKey the key's holder for a client's key; null for an operator's token, full or read
     */
    record Bearer(String name, ClientKeys.Holder clientKey) {
    }
}
