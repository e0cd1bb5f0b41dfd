package io.lockwatch.security;

import java.util.Collection;
import java.util.List;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * What the token of the request at hand may do: a full token reads and acts, a read token only reads, a device's
 * credential (HTTP Basic) only posts readings, of its own sensors, a client's key reaches the API for its own client.
 */
enum Caller {
    ANONYMOUS, READ, FULL, DEVICE, CLIENT_READ, CLIENT_ADMIN;

    static final String READ_ROLE = "READ", FULL_ROLE = "FULL", DEVICE_ROLE = "DEVICE", CLIENT_ROLE = "CLIENT";

    List<GrantedAuthority> authorities() {
        return switch (this) {
            case FULL -> List.of(new SimpleGrantedAuthority("ROLE_" + READ_ROLE), new SimpleGrantedAuthority("ROLE_" + FULL_ROLE));
            case READ -> List.of(new SimpleGrantedAuthority("ROLE_" + READ_ROLE));
            case DEVICE -> List.of(new SimpleGrantedAuthority("ROLE_" + DEVICE_ROLE));
            // what of the API a client's key reaches, and for which client, is ClientScope's to say
            case CLIENT_READ, CLIENT_ADMIN -> List.of(new SimpleGrantedAuthority("ROLE_" + CLIENT_ROLE));
            case ANONYMOUS -> List.of();
        };
    }

    /** The caller of the request this thread serves, as Spring Security authenticated it. */
    static Caller current() {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (auth == null || !auth.isAuthenticated()) {
            return ANONYMOUS;
        }
        Collection<? extends GrantedAuthority> granted = auth.getAuthorities();
        if (granted.contains(new SimpleGrantedAuthority("ROLE_" + FULL_ROLE))) {
            return FULL;
        }
        return granted.contains(new SimpleGrantedAuthority("ROLE_" + READ_ROLE)) ? READ : ANONYMOUS;
    }
}
