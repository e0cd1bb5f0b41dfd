package io.lockwatch.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.WebhookReceiver;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The console in a real browser (Debian's headless Chromium, driven through its chromedriver): log in, register a
 * sensor and two clients by importing a CSV file, see the sensor's door open on the page without a reload, its own
 * page with the opening on its timeline, acknowledge the alarm the open door raises, redeliver a dead notification,
 * pause a client; the pages fit a phone's width; and no error in the browser's console on the way.
 */
@CamelSpringBootTest
// the console's charts read the service's own /actuator/prometheus, which Spring Boot's tests switch off unless asked
@org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability(tracing = false)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lockwatch.notify.poll-interval=100",
        "lockwatch.notify.retry-schedule=1s",
        "lockwatch.notify.circuit-failures=1000"})
// a context of its own, closed after the class: left to the cache, it would be closed only once the next class's
// context had started, and its shutdown takes JVM-wide registrations (the platform-http paths) with it
@org.springframework.test.annotation.DirtiesContext(classMode = org.springframework.test.annotation.DirtiesContext.ClassMode.AFTER_CLASS)
// mvn verify -DskipBrowserTest=true, where Chromium cannot be installed: skipped, and said so in the report
@org.junit.jupiter.api.condition.DisabledIfSystemProperty(named = "skipBrowserTest", matches = "true",
        disabledReason = "-DskipBrowserTest=true: the console is not tried in a browser")
class ConsoleBrowserTest {

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();
    static WebDriver browser;

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired io.lockwatch.devices.Devices devices;

    @BeforeAll
    static void openTheBrowser() {
        // the build checks them before any test (pom.xml, maven-enforcer-plugin); this, for a run from an IDE
        assertThat(CHROMIUM).as("Debian's chromium: apt-get install chromium chromium-driver").exists();
        assertThat(CHROMEDRIVER).as("Debian's chromium-driver: apt-get install chromium chromium-driver").exists();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // root in CI: Chromium's sandbox needs an unprivileged user
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        // the driver named here: Selenium's own manager would try to download one
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
    }

    @AfterAll
    static void closeTheBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void anOperatorImportsWatchesADoorOpenPausesAClientAndRedeliversADeadNotification() throws Exception {
        String p = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        String sensor = "C" + p;
        String calm = "/calm-" + p, broken = "/broken-" + p;
        receiver.answer(broken, 500);
        // the tables are drawn anew every 2 s: an element found may be replaced before it is read
        WebDriverWait wait = new WebDriverWait(browser, WAIT);
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);

        // log in
        browser.get("http://127.0.0.1:" + port + "/console");
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token"))).sendKeys("test-admin-token");
        browser.findElement(By.cssSelector("#login-form button[type=submit]")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));
        wait.until(d -> d.findElement(By.id("ov-online")).getText().matches("\\d+"));

        // register by import
        Path csv = Files.createTempFile("registry-", ".csv");
        Files.writeString(csv, """
                sensor_id,address,heartbeat_timeout_seconds,open_alarm_seconds,client_name,client_url,gateways,credential
                %1$s,"Svobody st. 23, front door",,1,Calm %2$s,%3$s,Gw%2$s,live
                %1$s,"Svobody st. 23, front door",,1,Broken %2$s,%4$s,Gw%2$s,live
                """.formatted(sensor, p, receiver.url(calm), receiver.url(broken)), StandardCharsets.UTF_8);
        nav("import");
        browser.findElement(By.id("import-file")).sendKeys(csv.toAbsolutePath().toString());
        browser.findElement(By.cssSelector("#import-form button[type=submit]")).click();
        wait.until(d -> d.findElement(By.id("import-result")).getText().startsWith("Imported 2 rows"));
        assertThat(browser.findElement(By.id("import-result")).getText())
                .contains("sensors 1 created").contains("clients 2 created").contains("links 2 added")
                .contains("gateways 1 created, sensors 1 joined").contains("credentials 1 created");
        // the credential the file made: its secret shown this once, and good for the sensor's login
        String imported = browser.findElement(By.id("import-result")).getText();
        String made = imported.substring(imported.indexOf("sensor." + sensor + ": ")).split("\n")[0];
        assertThat(devices.authenticate("sensor." + sensor, made.substring(made.indexOf("lwd_")).trim())).isTrue();
        // and the latest imports list it, done, with what it did
        wait.until(d -> d.findElements(By.cssSelector("#import-table tbody tr")).stream().anyMatch(r ->
                r.getText().contains("done") && r.getText().contains("sensors 1 created, 0 changed")));

        // its alarms are critical, and escalate to the calm client after an hour unanswered
        jdbc.update("UPDATE sensors SET open_alarm_severity = 'critical' WHERE id = ?", sensor);
        jdbc.update("""
                INSERT INTO sensor_escalation_steps (sensor_id, step, after_seconds, client_id)
                SELECT ?, 1, 3600, id FROM clients WHERE name = ?""", sensor, "Calm " + p);

        // a door opens: the page shows it without a reload
        nav("sensors");
        WebElement id = browser.findElement(By.id("sensor-id"));
        id.clear();
        id.sendKeys(sensor);
        browser.findElement(By.cssSelector("#sensor-filter button[type=submit]")).click();
        wait.until(d -> doorOf(sensor).equals("—"));
        ((JavascriptExecutor) browser).executeScript("window.stillTheSamePage = true;");
        String body = "{\"sensor_id\":\"" + sensor + "\",\"data\":0,\"ts\":" + (System.currentTimeMillis() - 500)
                + ",\"battery\":80,\"rssi\":-90}";
        rabbit.send(ingest.exchange(), sensor, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
        wait.until(d -> doorOf(sensor).equals("open"));
        assertThat(((JavascriptExecutor) browser).executeScript("return window.stillTheSamePage === true;")).isEqualTo(true);
        screenshot("console-sensors");
        // filtered by the door's state: there among the open ones, not among the closed
        org.openqa.selenium.support.ui.Select door = new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("sensor-state")));
        door.selectByVisibleText("closed");
        browser.findElement(By.cssSelector("#sensor-filter button[type=submit]")).click();
        wait.until(d -> doorOf(sensor).isEmpty());
        door.selectByVisibleText("open");
        browser.findElement(By.cssSelector("#sensor-filter button[type=submit]")).click();
        wait.until(d -> doorOf(sensor).equals("open"));
        // its battery in the list, and filtered by it: not among those at 20 % or less, there at 80 %
        wait.until(d -> cellOf(sensor, 5).equals("80 %"));
        WebElement battery = browser.findElement(By.id("sensor-battery"));
        battery.sendKeys("20");
        browser.findElement(By.cssSelector("#sensor-filter button[type=submit]")).click();
        wait.until(d -> doorOf(sensor).isEmpty());
        battery.clear();
        battery.sendKeys("80");
        browser.findElement(By.cssSelector("#sensor-filter button[type=submit]")).click();
        wait.until(d -> cellOf(sensor, 5).equals("80 %"));
        battery.clear();

        // the sensor's own page: its state, the opening on its timeline, its clients and events
        clickWhenShown(wait, By.xpath("//table[@id='sensor-table']//button[text()='" + sensor + "']"));
        wait.until(d -> d.findElement(By.id("sensor-summary")).getText().contains("door open"));
        // and what its device said of itself beside the door
        wait.until(d -> d.findElement(By.id("sensor-device")).getText().startsWith("battery 80 % (")
                && d.findElement(By.id("sensor-device")).getText().endsWith(" · signal -90 dBm"));
        wait.until(d -> d.findElements(By.cssSelector("#timeline rect[fill='#d9534f']")).size() == 1);
        wait.until(d -> d.findElement(By.id("timeline-caption")).getText().contains("opened 1 time,"));
        wait.until(d -> d.findElements(By.cssSelector("#sensor-clients li")).size() == 2);
        wait.until(d -> d.findElements(By.xpath("//table[@id='event-table']//td[text()='sensor.state_changed']")).size() == 1);
        screenshot("console-sensor");

        // a credential for the sensor: its secret shown once, then revoked
        browser.findElement(By.id("credential-new")).click();
        wait.until(d -> d.findElement(By.id("credential-detail")).getText().contains("lwd_"));
        String shown = browser.findElement(By.id("credential-detail")).getText();
        String secret = shown.substring(shown.indexOf("lwd_")).trim();
        assertThat(shown).contains("sensor." + sensor);
        assertThat(devices.authenticate("sensor." + sensor, secret)).as("the secret the page showed").isTrue();
        clickWhenShown(wait, By.xpath("//table[@id='credential-table']//tr[td[2]='active']//button[text()='Revoke']"));
        wait.until(ExpectedConditions.alertIsPresent()).accept();
        wait.until(d -> d.findElements(By.xpath("//table[@id='credential-table']//td[text()='revoked']")).size() == 1);
        assertThat(devices.authenticate("sensor." + sensor, secret)).as("revoked").isFalse();

        // the door stays open past its 1 s threshold: its alarm, critical, its step due in an hour; acknowledged,
        // which stops the step
        nav("alarms");
        By alarmRow = By.xpath("//table[@id='alarm-table']//tr[td[1]='" + sensor + "']");
        wait.until(d -> d.findElement(alarmRow).getText().contains("critical") && d.findElement(alarmRow).getText().contains("1: due"));
        wait.until(d -> d.findElement(By.xpath("//table[@id='alarm-table']//tr[td[1]='" + sensor + "']/td[2]")).getText()
                .equals("door left open"));
        clickWhenShown(wait, By.xpath("//table[@id='alarm-table']//tr[td[1]='" + sensor + "']//button[text()='Acknowledge']"));
        wait.until(d -> Integer.valueOf(1).equals(jdbc.queryForObject(
                "SELECT count(*) FROM alarms WHERE sensor_id = ? AND acknowledged_by = 'console'", Integer.class, sensor)));
        wait.until(d -> d.findElement(alarmRow).getText().contains("1: stopped"));

        // a maintenance window over the building, planned here, listed open, then ended now
        browser.findElement(By.id("maintenance-reason")).sendKeys("rewiring " + p);
        browser.findElement(By.id("maintenance-prefix")).sendKeys("svobody st. 23");
        browser.findElement(By.cssSelector("#maintenance-form button[type=submit]")).click();
        By windowRow = By.xpath("//table[@id='maintenance-table']//tr[td[1]='rewiring " + p + "']");
        wait.until(d -> d.findElement(windowRow).getText().contains("open"));
        clickWhenShown(wait, By.xpath("//table[@id='maintenance-table']//tr[td[1]='rewiring " + p + "']//button[text()='End now']"));
        wait.until(d -> d.findElements(windowRow).isEmpty());
        assertThat(jdbc.queryForObject("SELECT ended_at IS NOT NULL FROM maintenance_windows WHERE reason = ?", Boolean.class,
                "rewiring " + p)).isTrue();

        // the broken endpoint's notification goes dead (one retry after 1 s); redelivered once it answers again
        wait.until(d -> "dead".equals(statusAt(broken)));
        receiver.answer(broken, 200);
        nav("deliveries");
        clickWhenShown(wait, By.xpath("//table[@id='dead-table']//tr[td[1]='" + sensor
                + "' and td[3]='sensor.state_changed']//button[text()='Redeliver']"));
        wait.until(d -> "delivered".equals(statusAt(broken)));
        // its attempts, one by one: two failed (500), then the redelivery
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("delivery-status"))).selectByVisibleText("delivered");
        String brokenId = jdbc.queryForObject("SELECT id::text FROM clients WHERE url = ?", String.class, receiver.url(broken));
        clickWhenShown(wait, By.xpath("//table[@id='dead-table']//tr[td[1]='" + sensor + "' and td[2]='" + brokenId
                + "' and td[3]='sensor.state_changed' and td[5]='delivered']//button[text()='Attempts']"));
        wait.until(d -> d.findElement(By.id("delivery-detail")).getText().matches("(?s).*: 500 in .*: 500 in .*: 200 in .*"));

        // the overview's chart has drawn the readings of this test
        nav("overview");
        wait.until(d -> d.findElement(By.id("rate-now")).getText().endsWith("/s"));
        wait.until(d -> !d.findElements(By.cssSelector("#rate-chart polyline")).isEmpty());
        // and says how far back the service can answer
        assertThat(browser.findElement(By.id("overview-kept")).getText()).isEqualTo(
                "History is kept 90 days; delivered, dead and superseded notifications 30 days after they finished.");
        screenshot("console-overview");

        // pause a client (one that takes batches of up to 50 events)
        jdbc.update("UPDATE clients SET max_events_per_request = 50 WHERE name = ?", "Calm " + p);
        nav("clients");
        clickWhenShown(wait, By.xpath("//table[@id='client-table']//button[text()='Pause Calm " + p + "']"));
        wait.until(d -> Boolean.FALSE.equals(jdbc.queryForObject("SELECT enabled FROM clients WHERE name = ?",
                Boolean.class, "Calm " + p)));
        wait.until(d -> d.findElements(By.xpath("//table[@id='client-table']//tr[td[1]='Calm " + p + "']/td[6]"))
                .stream().anyMatch(td -> td.getText().equals("paused")));
        // how many events a request carries
        assertThat(browser.findElement(By.xpath("//table[@id='client-table']//tr[td[1]='Calm " + p + "']/td[5]"))
                .getText()).isEqualTo("up to 50 events, an array");
        // a client's statistics and a test event, answered under the table
        clickWhenShown(wait, By.xpath("//table[@id='client-table']//button[text()='Statistics of Calm " + p + "']"));
        wait.until(d -> d.findElement(By.id("client-detail")).getText().matches("(?s).*last hour: [1-9]\\d* delivered.*"));
        clickWhenShown(wait, By.xpath("//table[@id='client-table']//button[text()='Test Calm " + p + "']"));
        wait.until(d -> d.findElement(By.id("client-detail")).getText().contains("answered a test event: delivered (200"));

        // the audit log names who did each of these, and what: narrowed to the paused client
        String calmId = jdbc.queryForObject("SELECT id::text FROM clients WHERE name = ?", String.class, "Calm " + p);
        nav("audit");
        browser.findElement(By.id("audit-resource")).sendKeys("clients/" + calmId);
        browser.findElement(By.cssSelector("#audit-filter button[type=submit]")).click();
        // the table is drawn again every 2 s: its rows are read at once, by a script
        String auditScript = "return [...document.querySelectorAll('#audit-table tbody tr')].map(r => [...r.cells].map(c => c.textContent).join(' | '));";
        wait.until(d -> {
            @SuppressWarnings("unchecked")
            List<String> auditRows = (List<String>) ((JavascriptExecutor) d).executeScript(auditScript);
            return !auditRows.isEmpty() && auditRows.stream().allMatch(r -> r.split(" \\| ")[3].startsWith("clients/" + calmId))
                    && auditRows.stream().anyMatch(r -> r.contains("| updateClient | clients/" + calmId + " | succeeded (200) |")
                            && r.contains("full-token-1") && r.contains("{\"enabled\":false}"))
                    && auditRows.stream().filter(r -> r.contains("| pingClient |")).count() == 1;
        });
        screenshot("console-audit");

        // a phone's width: nothing wider than the window but the tables, which scroll in their own box
        browser.manage().window().setSize(new org.openqa.selenium.Dimension(390, 844));
        for (String view : List.of("overview", "sensors", "clients", "deliveries", "alarms", "import", "audit")) {
            nav(view);
            Object fits = ((JavascriptExecutor) browser).executeScript(
                    "return document.documentElement.scrollWidth <= window.innerWidth;");
            assertThat(fits).as("%s at 390 px wide", view).isEqualTo(true);
        }
        nav("overview");
        screenshot("console-overview-390");

        List<LogEntry> errors = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
        assertThat(errors).as("errors in the browser's console").isEmpty();
    }

    /**
     * A person signs in at the organisation's identity provider (the test's OpenID Connect provider, the authorisation
     * code flow with PKCE), acts, is named in the audit log, is signed out from the list of who is signed in, signs in
     * again, and signs out there too; a person without a role of lockwatch's is told so on a page; with the provider
     * away, a page says so before the browser is sent there.
     */
    @Test
    void aPersonSignsInAtTheIdentityProviderActsAndSignsOutThere() throws Exception {
        WebDriverWait wait = new WebDriverWait(browser, WAIT);
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
        io.lockwatch.testing.IdentityProvider provider = io.lockwatch.testing.IdentityProvider.get();
        String console = "http://127.0.0.1:" + port + "/console/";
        String sub = "sub-" + UUID.randomUUID();

        provider.nextSignIn(sub, "olga", List.of(io.lockwatch.testing.IdentityProvider.OPERATOR));
        browser.get(console);
        ((JavascriptExecutor) browser).executeScript("sessionStorage.clear()");
        browser.get(console);
        wait.until(ExpectedConditions.elementToBeClickable(By.id("sso-sign-in"))).click();
        try {
            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));
        } catch (org.openqa.selenium.TimeoutException e) {
            // where the flow stopped: the provider's page, the hand-over, or the console
            throw new AssertionError("not signed in; the browser is at " + browser.getCurrentUrl() + ": "
                    + browser.getPageSource().substring(0, Math.min(2000, browser.getPageSource().length())), e);
        }
        // the provider's code and the token are not left in the address bar
        assertThat(browser.getCurrentUrl()).startsWith(console).doesNotContain("code=").doesNotContain("state=");
        // a change, made as olga and recorded so
        nav("alarms");
        String reason = "olga's works " + sub;
        browser.findElement(By.id("maintenance-reason")).sendKeys(reason);
        browser.findElement(By.id("maintenance-prefix")).sendKeys("nowhere st. " + sub);
        browser.findElement(By.cssSelector("#maintenance-form button[type=submit]")).click();
        try {
            wait.until(d -> Integer.valueOf(1).equals(jdbc.queryForObject("SELECT count(*) FROM audit_log WHERE actor = 'olga' "
                    + "AND actor_subject = ? AND operation = 'createMaintenanceWindow' AND status = 201", Integer.class, sub)));
        } catch (org.openqa.selenium.TimeoutException e) {
            throw new AssertionError("the window not planned as olga; the console says: " + browser.findElement(By.id("status")).getText()
                    + "; the audit log: " + jdbc.queryForList("SELECT actor || ' ' || operation || ' ' || status FROM audit_log "
                    + "WHERE at > now() - interval '1 minute'", String.class), e);
        }

        // signed out from the list of who is signed in (here by herself; an operator's is the same button): her token
        // is refused from then on, and the console asks her to sign in again
        nav("audit");
        clickWhenShown(wait, By.xpath("//table[@id='session-table']//button[text()='Sign olga out']"));
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        wait.until(d -> d.findElement(By.id("status")).getText().contains("refused"));
        java.time.Instant out = jdbc.queryForObject("SELECT before FROM sign_outs WHERE subject = ?", java.sql.Timestamp.class, sub)
                .toInstant();
        // a token is dated to the second, and one of the sign-out's own second is refused: signing in again comes after
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3))
                .until(() -> java.time.Instant.now().getEpochSecond() > out.getEpochSecond());
        provider.nextSignIn(sub, "olga", List.of(io.lockwatch.testing.IdentityProvider.OPERATOR));
        wait.until(ExpectedConditions.elementToBeClickable(By.id("sso-sign-in"))).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("nav")));

        // signing out ends the session at the provider too, and comes back here, signed out
        browser.findElement(By.id("logout")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        assertThat(browser.getCurrentUrl()).startsWith(console);
        assertThat(((JavascriptExecutor) browser).executeScript("return sessionStorage.getItem('lockwatch.token')")).isNull();

        // a person the provider knows, with no role of lockwatch's
        provider.nextSignIn("sub-nobody", "nils", List.of("accounting"));
        wait.until(ExpectedConditions.elementToBeClickable(By.id("sso-sign-in"))).click();
        wait.until(d -> d.findElement(By.tagName("h1")).getText().equals("No role of lockwatch's"));
        assertThat(browser.findElement(By.id("detail")).getText()).startsWith("Signed in as nils, but no role of yours");

        // the provider away: said before the browser is sent there
        provider.stop();
        try {
            // lockwatch takes its last look at the provider for a second: asked until it looks again (meanwhile the
            // browser may still be sent to the provider, which refuses the connection)
            new WebDriverWait(browser, WAIT).ignoring(org.openqa.selenium.WebDriverException.class).until(d -> {
                d.get("http://127.0.0.1:" + port + "/oauth2/authorization/lockwatch");
                return d.findElements(By.tagName("h1")).stream().anyMatch(h -> h.getText().equals("The identity provider cannot be reached"));
            });
        } finally {
            provider.start();
        }
    }

    /**
     * A portal link opens the console as its client's portal: only its doors, its endpoint paused, resumed and its
     * secret rotated by the client itself; the link leaves the address bar, cannot be used twice, and an expired one
     * is refused.
     */
    @Test
    void aClientOpensItsPortalByALinkAndActsOnItsOwnEndpointOnly() throws Exception {
        String p = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        io.lockwatch.testing.Api api = new io.lockwatch.testing.Api(port);
        String mine = api.client(receiver, "/portal-" + p), theirs = api.client(receiver, "/theirs-" + p);
        String front = "P" + p + "a", back = "P" + p + "b", notMine = "P" + p + "c";
        for (String s : List.of(front, back, notMine)) {
            jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", s, "Portal st. " + s);
        }
        api.link(mine, front);
        api.link(mine, back);
        api.link(theirs, notMine);
        io.lockwatch.testing.Api.Answer link = api.call("POST", "/clients/" + mine + "/portal-links", "test-admin-token", java.util.Map.of());
        assertThat(link.status()).as(String.valueOf(link.body())).isEqualTo(201);
        String url = link.body().get("url").asText();
        WebDriverWait wait = new WebDriverWait(browser, WAIT);
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
        try {
            open(url);
            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("portal")));
            wait.until(d -> d.findElement(By.id("portal-door-table")).getText().contains(back));
            String doors = browser.findElement(By.id("portal-door-table")).getText();
            assertThat(doors).contains(front).contains("Portal st. " + back).doesNotContain(notMine);
            assertThat(browser.getCurrentUrl()).as("the link is out of the address at once").doesNotContain("lwp_");
            assertThat(browser.findElement(By.cssSelector("nav button[data-view='clients']")).isDisplayed())
                    .as("none of the operator's sections").isFalse();

            clickWhenShown(wait, By.cssSelector("#portal-pause:not([hidden])"));
            wait.until(d -> d.findElement(By.id("portal-endpoint")).getText().contains("paused"));
            assertThat(api.call("GET", "/clients/" + mine, "test-read-token", null).body().get("enabled").asBoolean()).isFalse();
            clickWhenShown(wait, By.cssSelector("#portal-resume:not([hidden])"));
            wait.until(d -> d.findElement(By.id("portal-endpoint")).getText().contains("delivering"));
            assertThat(api.call("GET", "/clients/" + theirs, "test-read-token", null).body().get("enabled").asBoolean())
                    .as("the other client untouched").isTrue();
            clickWhenShown(wait, By.id("portal-rotate"));
            wait.until(d -> d.findElement(By.id("portal-detail")).getText().contains("whsec_"));
            assertThat(jdbc.queryForObject("SELECT previous_secret_until IS NOT NULL FROM clients WHERE id = ?::uuid",
                    Boolean.class, mine)).isTrue();
            screenshot("console-portal");

            // used once: refused the second time, in this browser or any other
            open(url);
            wait.until(d -> d.findElement(By.id("status")).getText().contains("expired or was used already"));
            assertThat(browser.findElement(By.id("login")).isDisplayed()).isTrue();

            io.lockwatch.testing.Api.Answer expiring = api.call("POST", "/clients/" + mine + "/portal-links",
                    "test-admin-token", java.util.Map.of("ttl_seconds", 60));
            jdbc.update("UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE id = ?::uuid",
                    expiring.body().get("id").asText());
            open(expiring.body().get("url").asText());
            wait.until(d -> d.findElement(By.id("status")).getText().contains("expired or was used already"));
        } finally {
            ((JavascriptExecutor) browser).executeScript("sessionStorage.clear()");
            // the refused links' 404s are expected here: read, they leave the other test's look at the console clean
            browser.manage().logs().get(LogType.BROWSER);
        }
    }

    /** A page anew, whatever was open (a link to the page already open, bar its fragment, would not load it again). */
    private static void open(String url) {
        browser.get("about:blank");
        ((JavascriptExecutor) browser).executeScript("try { sessionStorage.clear(); } catch (e) {}");
        browser.get(url);
    }

    /** Finds and clicks at once, again if the table was drawn anew in between (a stale element). */
    private static void clickWhenShown(WebDriverWait wait, By button) {
        wait.until(d -> {
            List<WebElement> found = d.findElements(button);
            if (found.isEmpty()) {
                return false;
            }
            found.get(0).click();
            return true;
        });
    }

    private void nav(String view) {
        browser.findElement(By.cssSelector("nav button[data-view='" + view + "']")).click();
        new WebDriverWait(browser, WAIT).until(ExpectedConditions.visibilityOfElementLocated(By.id(view)));
    }

    private String doorOf(String sensor) {
        return cellOf(sensor, 3);
    }

    /** The sensor's cell in this column of the sensor list (1: its id), or "" when it is not listed. */
    private String cellOf(String sensor, int column) {
        List<WebElement> cells = browser.findElements(By.xpath("//table[@id='sensor-table']//tr[td[1]='" + sensor + "']/td["
                + column + "]"));
        return cells.isEmpty() ? "" : cells.get(0).getText();
    }

    /** The status of the notification posted to this receiver path's client. */
    private String statusAt(String path) {
        List<String> s = jdbc.queryForList("""
                SELECT n.status FROM notifications n JOIN clients c ON c.id = n.client_id
                 WHERE c.url = ? AND n.type = 'sensor.state_changed'""",
                String.class, receiver.url(path));
        return s.isEmpty() ? null : s.get(0);
    }

    private static void screenshot(String name) throws Exception {
        Path file = Path.of("target", name + ".png");
        Files.write(file, ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }
}
