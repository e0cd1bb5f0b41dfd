package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The SSRF guard's rules, without a network: the URL forms it refuses, the addresses it refuses however they are
 * written, and a name whose answers include one refused address.
 */
class TargetGuardTest {

    /** A resolver that knows one name, public, and must not be asked about any other. */
    final TargetGuard guard = new TargetGuard(false, host -> {
        if (host.equals("hooks.example.com")) {
            return new InetAddress[] {address(93, 184, 215, 14)};
        }
        throw new UnknownHostException(host);
    });

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            http://127.0.0.1/hook                      | host 127.0.0.1 is a loopback address
            http://2130706433/hook                     | host 2130706433 is the loopback IPv4 address 127.0.0.1 written in another form; write an address as four decimal numbers
            http://0177.0.0.1/hook                     | host 0177.0.0.1 is the loopback IPv4 address 127.0.0.1 written in another form; write an address as four decimal numbers
            http://0x7f.1/hook                         | host 0x7f.1 is the loopback IPv4 address 127.0.0.1 written in another form; write an address as four decimal numbers
            http://127.1/hook                          | host 127.1 is the loopback IPv4 address 127.0.0.1 written in another form; write an address as four decimal numbers
            http://127.0.0.1./hook                     | host 127.0.0.1. is the loopback IPv4 address 127.0.0.1 written in another form; write an address as four decimal numbers
            http://1572394766/hook                     | host 1572394766 is the IPv4 address 93.184.215.14 written in another form; write an address as four decimal numbers
            http://[::ffff:127.0.0.1]/hook             | host [::ffff:127.0.0.1] is a loopback address
            http://[::ffff:7f00:1]/hook                | host [::ffff:7f00:1] is a loopback address
            http://[::127.0.0.1]/hook                  | host [::127.0.0.1] is a loopback IPv4 address
            http://[64:ff9b::a9fe:a9fe]/hook           | host [64:ff9b::a9fe:a9fe] is a link-local IPv4 address
            http://[2002:a00:1::]/hook                 | host [2002:a00:1::] is a private IPv4 address
            http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook | host [2001:0:4136:e378:8000:63bf:80ff:fffe] is a loopback IPv4 address
            http://[::1]/hook                          | host [::1] is a loopback address
            http://[::]/hook                           | host [::] is an unspecified address
            http://169.254.169.254/latest/meta-data/   | host 169.254.169.254 is a link-local address
            http://[fd00:ec2::254]/latest/meta-data/   | host [fd00:ec2::254] is a private address
            http://[fe80::1]/hook                      | host [fe80::1] is a link-local address
            http://100.100.100.200/latest/meta-data/   | host 100.100.100.200 is a shared (carrier-grade NAT) address
            http://10.1.2.3/hook                       | host 10.1.2.3 is a private address
            http://172.31.0.1/hook                     | host 172.31.0.1 is a private address
            http://192.168.1.1/hook                    | host 192.168.1.1 is a private address
            http://0.0.0.0/hook                        | host 0.0.0.0 is an unspecified address
            http://224.0.0.1/hook                      | host 224.0.0.1 is a multicast address
            http://255.255.255.255/hook                | host 255.255.255.255 is a reserved address
            http://256.1.1.1/hook                      | host 256.1.1.1 is not a valid IPv4 address
            http://1.2.3.4.5/hook                      | host 1.2.3.4.5 is not a valid IPv4 address
            ftp://hooks.example.com/hook               | scheme must be http or https
            http://user:pw@hooks.example.com/hook      | URL must not carry credentials
            http:///hook                               | URL has no host
            """)
    void addressesAndFormsThatAreRefusedWithoutALookup(String url, String problem) {
        assertThat(guard.problemWithForm(url)).isEqualTo(problem);
        assertThat(guard.problemWith(url)).isEqualTo(problem);
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://hooks.example.com/hook", "http://93.184.215.14:8080/hook",
            "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook", "http://172.32.0.1/hook", "http://100.128.0.1/"})
    void publicTargetsPass(String url) {
        assertThat(guard.problemWithForm(url)).isNull();
        assertThat(guard.problemWith(url)).isNull();
    }

    @Test
    void aNameIsCheckedOnEveryAddressItResolvesTo() {
        TargetGuard twoAnswers = new TargetGuard(false, host -> new InetAddress[] {
                address(93, 184, 215, 14), address(169, 254, 169, 254)});

        // the form is fine; the name is checked where it is resolved: at registration and when connecting
        assertThat(twoAnswers.problemWithForm("http://metadata.example/")).isNull();
        assertThat(twoAnswers.problemWith("http://metadata.example/"))
                .isEqualTo("host metadata.example resolves to a link-local address");
        assertThatThrownBy(() -> twoAnswers.connectableAddresses("metadata.example"))
                .isInstanceOf(TargetGuard.Refused.class).hasMessage("host metadata.example resolves to a link-local address");
    }

    /** The refusal names no address: to an API caller it would be a DNS oracle into the operator's network. The log has it. */
    @Test
    void aRefusalNamesTheResolvedAddressOnlyInTheLog() {
        TargetGuard inside = new TargetGuard(false, host -> new InetAddress[] {address(10, 1, 2, 3)});
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(TargetGuard.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log = new ch.qos.logback.core.read.ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            assertThat(inside.problemWith("https://intranet.example/hook"))
                    .isEqualTo("host intranet.example resolves to a private address").doesNotContain("10.1.2.3");
        } finally {
            logger.detachAppender(log);
        }
        assertThat(log.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .anySatisfy(m -> assertThat(m).contains("intranet.example").contains("10.1.2.3"));
    }

    @Test
    void aNameThatDoesNotResolveIsSaidSo() {
        assertThat(guard.problemWith("http://nowhere.example/")).isEqualTo("host nowhere.example does not resolve");
    }

    @Test
    void withPrivateTargetsAllowedOnlyTheFormIsChecked() throws Exception {
        TargetGuard open = new TargetGuard(true, host -> new InetAddress[] {address(127, 0, 0, 1)});

        assertThat(open.problemWith("http://127.0.0.1:8080/hook")).isNull();
        assertThat(open.connectableAddresses("localhost")).containsExactly(address(127, 0, 0, 1));
        // an ambiguous address stays refused: it is a typo or a trick either way
        assertThat(open.problemWith("http://0177.0.0.1/")).contains("written in another form");
        assertThat(open.problemWith("file:///etc/passwd")).isEqualTo("scheme must be http or https");
    }

    private static InetAddress address(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
