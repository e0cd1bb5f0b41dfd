package io.lockwatch.infra.startup;

/** A service lockwatch needs did not answer at start-up within the configured wait. */
class DependencyUnavailableException extends RuntimeException {

    private final String dependency;
    private final String address;
    private final String property;

    public DependencyUnavailableException(String dependency, String address, String property, String reason) {
        super(dependency + " at " + address + " is not reachable: " + reason);
        this.dependency = dependency;
        this.address = address;
        this.property = property;
    }

    public String dependency() {
        return dependency;
    }

    public String address() {
        return address;
    }

    public String property() {
        return property;
    }
}
