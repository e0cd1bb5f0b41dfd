package io.lockwatch.infra.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.AbstractDataSource;

/** The pool's alive check of a ClickHouse connection costs no query; everything else reaches the driver. */
class ClickHouseAliveCheckTest {

    final List<String> driverCalls = new ArrayList<>();
    boolean closed;

    @Test
    void anOpenConnectionIsAliveWithoutAskingTheServer() throws SQLException {
        Connection connection = ClickHouse.withoutAliveCheck(driver()).getConnection();

        assertThat(connection.isValid(1)).isTrue();
        closed = true;
        assertThat(connection.isValid(1)).isFalse();
        assertThat(driverCalls).containsExactly("isClosed", "isClosed");
    }

    @Test
    void everythingElseIsTheDriversWithItsOwnExceptions() throws SQLException {
        Connection connection = ClickHouse.withoutAliveCheck(driver()).getConnection();

        assertThat(connection.getSchema()).isEqualTo("lockwatch");
        assertThatThrownBy(connection::commit).isInstanceOf(SQLException.class).hasMessage("no transactions here");
        assertThat(driverCalls).containsExactly("getSchema", "commit");
    }

    private AbstractDataSource driver() {
        return new AbstractDataSource() {
            @Override
            public Connection getConnection() {
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            driverCalls.add(method.getName());
                            return switch (method.getName()) {
                                case "isClosed" -> closed;
                                case "getSchema" -> "lockwatch";
                                case "commit" -> throw new SQLException("no transactions here");
                                default -> throw new UnsupportedOperationException(method.getName());
                            };
                        });
            }

            @Override
            public Connection getConnection(String username, String password) {
                return getConnection();
            }
        };
    }
}
