package io.lockwatch.infra.clickhouse;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where history is kept when it is kept in ClickHouse. An empty {@code url} means no ClickHouse (the
 * embedded default keeps history in PostgreSQL).
 *
 * @param url            JDBC URL of the legacy driver, e.g. {@code jdbc:clickhouse://127.0.0.1:8123/lockwatch}
 * @param username       ClickHouse user
 * @param password       ClickHouse password (never logged)
 * @param socketTimeout  how long one query or insert may take
 * @param poolSize       connections kept open at most (history writes, exports, API queries)
 */
@ConfigurationProperties("lockwatch.clickhouse")
public record ClickHouseSettings(String url, String username, String password, Duration socketTimeout,
                                 Integer poolSize) {

    public ClickHouseSettings {
        url = url == null ? "" : url.trim();
        username = username == null || username.isBlank() ? "default" : username;
        password = password == null ? "" : password;
        socketTimeout = socketTimeout == null ? Duration.ofSeconds(30) : socketTimeout;
        poolSize = poolSize == null || poolSize < 1 ? 8 : poolSize;
    }

    public boolean configured() {
        return !url.isEmpty();
    }
}
