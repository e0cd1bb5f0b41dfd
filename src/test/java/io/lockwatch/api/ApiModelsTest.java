package io.lockwatch.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.parser.OpenAPIV3Parser;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.Test;
import org.openapitools.jackson.nullable.JsonNullable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The API's models are the contract's schemas, field for field; an update binds its absent, null and given fields
 * apart; what a schema cannot say is refused naming its field.
 */
class ApiModelsTest {

    private static final OpenAPI CONTRACT = new OpenAPIV3Parser().read(ApiDocument.CONTRACT);

    @Test
    void eachModelIsTheSchemaOfItsNameFieldForField() {
        List<Class<?>> models = new ArrayList<>();
        for (Class<?> c : RequestBodies.class.getDeclaredClasses()) {
            if (c.isRecord()) {
                models.add(c);
            }
        }
        assertThat(models).hasSize(15);
        for (Class<?> model : models) {
            Schema<?> schema = CONTRACT.getComponents().getSchemas().get(model.getSimpleName());
            assertThat(schema).as("openapi.yaml has a schema %s", model.getSimpleName()).isNotNull();
            assertThat(jsonNames(model, true)).as(model.getSimpleName()).isEqualTo(new TreeSet<>(schema.getProperties().keySet()));
            // every body is closed: a field the model does not know is refused by the contract before binding
            assertThat(schema.getAdditionalProperties()).as(model.getSimpleName()).isEqualTo(Boolean.FALSE);
        }
    }

    @Test
    void eachComposedAnswerIsTheSchemaOfItsName() {
        Map<Class<?>, String> schemas = Map.ofEntries(
                Map.entry(ResponseBodies.Page.class, "SensorPage"),
                Map.entry(ResponseBodies.Items.class, "SensorList"),
                Map.entry(ResponseBodies.PingResult.class, "PingResult"),
                Map.entry(ResponseBodies.Reading.class, "Reading"),
                Map.entry(ResponseBodies.Event.class, "Event"),
                Map.entry(ResponseBodies.RegistryImported.class, "RegistryImported"),
                Map.entry(ResponseBodies.RegistryImport.class, "RegistryImport"),
                Map.entry(io.lockwatch.registry.RegistryFile.Row.class, "RegistryRow"),
                Map.entry(io.lockwatch.registry.RegistryFile.NewClient.class, "RegistryImported.new_clients"),
                Map.entry(io.lockwatch.registry.RegistryViews.Sensor.class, "Sensor"),
                Map.entry(io.lockwatch.registry.RegistryViews.Client.class, "Client"),
                Map.entry(io.lockwatch.registry.RegistryViews.Overview.class, "Overview"),
                Map.entry(io.lockwatch.registry.RegistryViews.SensorCounts.class, "Overview.sensors"),
                Map.entry(io.lockwatch.registry.RegistryViews.Kept.class, "Overview.kept"),
                Map.entry(io.lockwatch.registry.RegistryViews.NotificationCounts.class, "Overview.notifications"),
                Map.entry(io.lockwatch.history.HistoryRecords.DailyCount.class, "DailyCounts.items"),
                Map.entry(io.lockwatch.alarms.AlarmStore.Alarm.class, "Alarm"),
                Map.entry(io.lockwatch.alarms.AlarmStore.Escalation.class, "Alarm.escalation"),
                Map.entry(io.lockwatch.maintenance.MaintenanceWindows.Window.class, "MaintenanceWindow"),
                Map.entry(io.lockwatch.alarms.OpenSchedules.View.class, "OpenSchedule"),
                Map.entry(io.lockwatch.alarms.OpenSchedules.RangeView.class, "OpenSchedule.ranges"),
                Map.entry(ResponseBodies.EscalationChain.class, "EscalationChain"),
                Map.entry(io.lockwatch.alarms.AlarmStore.Step.class, "EscalationChain.steps"),
                Map.entry(io.lockwatch.registry.RegistryFile.NewCredential.class, "NewCredential"),
                Map.entry(io.lockwatch.devices.Devices.Gateway.class, "Gateway"),
                Map.entry(io.lockwatch.devices.Devices.Credential.class, "Credential"),
                Map.entry(io.lockwatch.notify.NotificationQueries.Notification.class, "Notification"),
                Map.entry(ResponseBodies.ClientKeyList.class, "ClientKeyList"),
                Map.entry(ResponseBodies.PortalLink.class, "PortalLink"),
                Map.entry(ResponseBodies.Caller.class, "Caller"),
                Map.entry(io.lockwatch.selfservice.PortalLinks.Session.class, "PortalSession"),
                Map.entry(ResponseBodies.ClientSensorPage.class, "ClientSensorPage"),
                Map.entry(io.lockwatch.notify.Feed.Page.class, "FeedPage"),
                Map.entry(io.lockwatch.selfservice.ClientKeys.Key.class, "ClientKey"),
                Map.entry(io.lockwatch.selfservice.ClientKeys.NewKey.class, "NewClientKey"));
        schemas.forEach((model, name) -> {
            String[] path = name.split("\\.");
            Schema<?> schema = CONTRACT.getComponents().getSchemas().get(path[0]);
            if (path.length > 1) {
                // an inline object of the schema: a property's, or its array's items
                Schema<?> property = (Schema<?>) schema.getProperties().get(path[1]);
                schema = property.getItems() != null ? property.getItems() : property;
            }
            assertThat(schema).as(name).isNotNull();
            assertThat(jsonNames(model, false)).as(model.getSimpleName() + " as " + name)
                    .isEqualTo(new TreeSet<>(schema.getProperties().keySet()));
        });
        for (Class<?> c : ResponseBodies.class.getDeclaredClasses()) {
            assertThat(schemas).as("every answer model is checked here").containsKey(c);
        }
    }

    @Test
    void aClientWithItsSecretIsTheClientsFieldsAndTheSecretSideBySide() throws Exception {
        var client = new io.lockwatch.registry.RegistryViews.Client(java.util.UUID.randomUUID(), "n", "https://x/",
                "every_event", null, null, 1, true, null, null, null, null, java.time.Instant.EPOCH, java.time.Instant.EPOCH);
        JsonNode json = assertWrittenAsAllOf(new io.lockwatch.registry.RegistryViews.ClientWithSecret(client, "whsec_x"),
                "ClientWithSecret");
        assertThat(json.get("webhook_secret").asText()).isEqualTo("whsec_x");
        assertThat(json.get("created_at").asText()).isEqualTo("1970-01-01T00:00:00Z");
    }

    @Test
    void aNotificationWithItsAttemptsIsTheNotificationsFieldsAndTheAttemptsSideBySide() throws Exception {
        var n = new io.lockwatch.notify.NotificationQueries.Notification(java.util.UUID.randomUUID(),
                java.util.UUID.randomUUID(), "A1", "sensor.state_changed", 3, "dead", 1, null, 500, "HTTP 500", null, null,
                java.time.Instant.EPOCH, java.time.Instant.EPOCH);
        var attempt = new io.lockwatch.notify.NotificationQueries.AttemptMade(1, 500, "HTTP 500", 12, java.time.Instant.EPOCH);
        JsonNode json = assertWrittenAsAllOf(new io.lockwatch.notify.NotificationQueries.NotificationDetail(n,
                List.of(attempt)), "NotificationDetail");
        Schema<?> detail = (Schema<?>) CONTRACT.getComponents().getSchemas().get("NotificationDetail").getAllOf().get(1);
        Schema<?> attempts = (Schema<?>) detail.getProperties().get("attempts_made");
        assertThat(fieldNames(json.get("attempts_made").get(0)))
                .isEqualTo(new TreeSet<>(attempts.getItems().getProperties().keySet()));
    }

    /** The value as JSON has exactly the properties of the allOf schema's parts, a referenced schema's included. */
    private static JsonNode assertWrittenAsAllOf(Object value, String schemaName) throws Exception {
        JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(value));
        Set<String> expected = new TreeSet<>();
        for (Object each : CONTRACT.getComponents().getSchemas().get(schemaName).getAllOf()) {
            Schema<?> part = (Schema<?>) each;
            Schema<?> resolved = part.get$ref() == null ? part
                    : CONTRACT.getComponents().getSchemas().get(part.get$ref().replace("#/components/schemas/", ""));
            expected.addAll(resolved.getProperties().keySet());
        }
        assertThat(fieldNames(json)).as(schemaName).isEqualTo(expected);
        return json;
    }

    private static Set<String> fieldNames(JsonNode json) {
        Set<String> names = new TreeSet<>();
        json.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void timesAreAnsweredAsTheContractsDateTimes() throws Exception {
        String json = Json.MAPPER.writeValueAsString(ResponseBodies.Event.of(new io.lockwatch.history.HistoryRecords
                .EventRecord("A1", 7, "sensor.state_changed", 0, 1, 1_764_000_000_123L)));
        assertThat(Json.MAPPER.readTree(json).get("occurred_at").asText()).isEqualTo("2025-11-24T16:00:00.123Z");
    }

    @Test
    void everyRequestBodyOfTheContractHasItsModel() {
        Set<String> bodies = new TreeSet<>();
        CONTRACT.getPaths().values().forEach(path -> path.readOperations().forEach(op -> {
            if (op.getRequestBody() != null) {
                op.getRequestBody().getContent().forEach((type, media) -> {
                    if (type.equals("application/json") && media.getSchema().get$ref() != null) {
                        bodies.add(media.getSchema().get$ref().replace("#/components/schemas/", ""));
                    }
                });
            }
        }));
        Set<String> models = new TreeSet<>();
        for (Class<?> c : RequestBodies.class.getDeclaredClasses()) {
            if (c.isRecord()) {
                models.add(c.getSimpleName());
            }
        }
        // ReadingsIn is left open in the contract and read reading by reading, as ingest reads them
        bodies.remove("ReadingsIn");
        // so is a network's own message: its adapter reads what it knows of it (TheThingsStackAdapter.uplink)
        bodies.remove("TheThingsStackUplink");
        assertThat(models).isEqualTo(bodies);
    }

    @Test
    void anUpdateTellsAnAbsentFieldFromOneSetBackToTheDefault() {
        RequestBodies.SensorUpdate absent = bind("{\"address\":\"Hall\"}", RequestBodies.SensorUpdate.class);
        RequestBodies.SensorUpdate cleared = bind("{\"heartbeat_timeout_seconds\":null}", RequestBodies.SensorUpdate.class);
        RequestBodies.SensorUpdate given = bind("{\"heartbeat_timeout_seconds\":90,\"open_alarm_seconds\":30}",
                RequestBodies.SensorUpdate.class);

        assertThat(absent.address()).isEqualTo("Hall");
        assertThat(absent.heartbeatTimeoutSeconds()).isEqualTo(JsonNullable.undefined());
        assertThat(cleared.heartbeatTimeoutSeconds()).isEqualTo(JsonNullable.of(null));
        assertThat(cleared.openAlarmSeconds()).isEqualTo(JsonNullable.undefined());
        assertThat(given.heartbeatTimeoutSeconds()).isEqualTo(JsonNullable.of(90));
        assertThat(given.openAlarmSeconds()).isEqualTo(JsonNullable.of(30));

        RequestBodies.ClientUpdate every = bind("{\"event_types\":null}", RequestBodies.ClientUpdate.class);
        RequestBodies.ClientUpdate some = bind("{\"event_types\":[\"sensor.state_changed\"]}", RequestBodies.ClientUpdate.class);
        assertThat(every.eventTypes()).isEqualTo(JsonNullable.of(null));
        assertThat(some.eventTypes()).isEqualTo(JsonNullable.of(List.of("sensor.state_changed")));
        assertThat(bind("{\"name\":\"n\"}", RequestBodies.ClientUpdate.class).eventTypes())
                .isEqualTo(JsonNullable.undefined());
    }

    @Test
    void textThatIsNotPlainIsRefusedNamingItsField() {
        assertThatThrownBy(() -> bind("{\"id\":\"A1\",\"address\":\"door\\u0000one\"}", RequestBodies.SensorCreate.class))
                .isInstanceOfSatisfying(ApiProblem.class, p -> {
                    assertThat(p.status()).isEqualTo(400);
                    assertThat(p.field()).isEqualTo("address");
                });
        assertThatThrownBy(() -> bind("{\"by\":\"   \"}", RequestBodies.AlarmAcknowledgement.class))
                .isInstanceOfSatisfying(ApiProblem.class, p -> assertThat(p.field()).isEqualTo("by"));
        // a lone surrogate, which PostgreSQL would keep as '?'
        assertThatThrownBy(() -> bind("{\"name\":\"a\\ud800b\",\"url\":\"http://x/\"}", RequestBodies.ClientCreate.class))
                .isInstanceOfSatisfying(ApiProblem.class, p -> assertThat(p.field()).isEqualTo("name"));
        assertThat(bind("{\"name\":\"two\\tlines\\n\",\"url\":\"http://x/\"}", RequestBodies.ClientCreate.class).name())
                .isEqualTo("two\tlines\n");
    }

    @Test
    void aBodyThatDoesNotBindIsABadRequestNotAFault() {
        assertThatThrownBy(() -> bind("{\"since\":\"yesterday\"}", RequestBodies.ReplayRequest.class))
                .isInstanceOfSatisfying(ApiProblem.class, p -> {
                    assertThat(p.status()).isEqualTo(400);
                    assertThat(p.field()).isEqualTo("since");
                    // the answer names the field, not the Java types behind it
                    assertThat(p.getMessage()).isEqualTo("since does not match its schema");
                });
        assertThatThrownBy(() -> bind("[1]", RequestBodies.ReplayRequest.class))
                .isInstanceOfSatisfying(ApiProblem.class, p -> assertThat(p.status()).isEqualTo(400));
    }

    @Test
    void aRegistryRowIsCheckedByTheContractsRulesWithEachFieldNamed() {
        FlatSchema rows = registryRow();
        ObjectNode bad = Json.MAPPER.createObjectNode().put("sensor_id", "bad-id!").put("heartbeat_timeout_seconds", 0)
                .put("colour", "red");
        assertThat(rows.problems(bad)).containsExactlyInAnyOrder(
                "colour: not a field of RegistryRow",
                "sensor_id: must match ^[0-9A-Za-z]{1,16}$",
                "address: required",
                "heartbeat_timeout_seconds: must be at least 1");
        assertThat(rows.problems(Json.MAPPER.valueToTree(Map.of("sensor_id", "A1", "address", "Hall")))).isEmpty();
    }

    /** The fast check of a row and the OpenAPI validator Camel runs agree on what the contract allows. */
    @Test
    void theRowCheckAgreesWithTheOpenApiValidator() {
        FlatSchema rows = registryRow();
        com.atlassian.oai.validator.schema.SchemaValidator validator = new com.atlassian.oai.validator.schema.SchemaValidator(
                CONTRACT, new com.atlassian.oai.validator.report.MessageResolver());
        Schema<?> schema = CONTRACT.getComponents().getSchemas().get("RegistryRow");
        String[] ids = {"A1", "", "0123456789abcdef", "0123456789abcdefX", "bad-id", "Ünï"};
        String[] addresses = {"Hall", "", "x".repeat(500), "x".repeat(501), "😀".repeat(500)};
        Object[] seconds = {null, 0, 1, 2_592_000, 2_592_001, -5, "60", 1.5};
        int cases = 0;
        for (String id : ids) {
            for (String address : addresses) {
                for (Object timeout : seconds) {
                    ObjectNode row = Json.MAPPER.createObjectNode().put("sensor_id", id).put("address", address);
                    row.set("heartbeat_timeout_seconds", Json.MAPPER.valueToTree(timeout));
                    row.put("client_name", id.isEmpty() ? null : "c");
                    boolean fast = rows.problems(row).isEmpty();
                    boolean contract = !validator.validate(() -> row, schema, null).hasErrors();
                    assertThat(fast).as("%s: fast %s, validator %s", row, fast, contract).isEqualTo(contract);
                    cases++;
                }
            }
        }
        assertThat(cases).isEqualTo(240);

        String[] gateways = {"-", "G1", "G1 g-2_x", "G1  G2", " G1", "-G1", "G1 -", "x".repeat(64), "x".repeat(65)};
        String[] credentials = {"live", "none", "LIVE", "", "revoked"};
        for (String gateway : gateways) {
            for (String credential : credentials) {
                ObjectNode row = Json.MAPPER.createObjectNode().put("sensor_id", "A1").put("address", "Hall")
                        .put("gateways", gateway).put("credential", credential);
                boolean fast = rows.problems(row).isEmpty();
                boolean contract = !validator.validate(() -> row, schema, null).hasErrors();
                assertThat(fast).as("%s: fast %s, validator %s", row, fast, contract).isEqualTo(contract);
            }
        }
    }

    @Test
    void aSchemaWithARuleTheRowCheckDoesNotKnowIsRefusedWhenRead() throws Exception {
        JsonNode colour = Json.MAPPER.readTree("""
                {"type": "object", "additionalProperties": false,
                 "properties": {"colour": {"type": "string", "format": "hex-colour"}}}""");
        assertThatThrownBy(() -> FlatSchema.of("Row", colour)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Row.colour uses format");
        JsonNode open = Json.MAPPER.readTree("""
                {"type": "object", "properties": {"colour": {"type": "string"}}}""");
        assertThatThrownBy(() -> FlatSchema.of("Row", open)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a closed object");
    }

    private static FlatSchema registryRow() {
        try {
            return FlatSchema.of("RegistryRow", ApiDocument.load(ApiDocument.CONTRACT).schema("RegistryRow"));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static <T> T bind(String json, Class<T> model) {
        Exchange exchange = new DefaultExchange(new DefaultCamelContext());
        exchange.getMessage().setBody(json);
        return Json.bind(exchange, model);
    }

    private static Set<String> jsonNames(Class<?> model, boolean read) {
        JavaType type = Json.MAPPER.constructType(model);
        BeanDescription description = read ? Json.MAPPER.getDeserializationConfig().introspect(type)
                : Json.MAPPER.getSerializationConfig().introspect(type);
        Set<String> names = new TreeSet<>();
        for (BeanPropertyDefinition p : description.findProperties()) {
            names.add(p.getName());
        }
        return names;
    }
}
