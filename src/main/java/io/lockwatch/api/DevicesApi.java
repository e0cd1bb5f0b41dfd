package io.lockwatch.api;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.lockwatch.devices.DeviceLogin;
import io.lockwatch.devices.Devices;
import org.apache.camel.Exchange;

/**
 * Gateways, and the credentials sensors and gateways log in with. A credential's secret is in the answer of its
 * creation only.
 */
public class DevicesApi {

    private final Devices devices;
    private final Duration grace;

    public DevicesApi(Devices devices, Duration grace) {
        this.devices = devices;
        this.grace = grace;
    }

    // --- gateways

    public void createGateway(Exchange exchange) {
        RequestBodies.GatewayCreate gateway = Json.bind(exchange, RequestBodies.GatewayCreate.class);
        try {
            Json.respond(exchange, 201, devices.createGateway(gateway.id(), gateway.description(), gateway.sensors()));
        } catch (Devices.AlreadyExists e) {
            throw ApiProblem.conflict(e.getMessage());
        } catch (Devices.UnknownSensors e) {
            throw unknown(gateway.sensors(), e);
        }
    }

    public void listGateways(Exchange exchange) {
        int limit = Json.limit(exchange);
        String after = Json.header(exchange, "cursor");
        if (after != null && !DeviceLogin.GATEWAY_ID.matcher(after).matches()) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        Json.respond(exchange, 200, Json.pageById(devices.gateways(after, limit + 1), limit, Devices.Gateway::id));
    }

    public void getGateway(Exchange exchange) {
        String id = gatewayId(exchange);
        Devices.Gateway gateway = devices.gateway(id);
        if (gateway == null) {
            throw ApiProblem.notFound("gateway " + id);
        }
        Json.respond(exchange, 200, gateway);
    }

    public void updateGateway(Exchange exchange) {
        String id = gatewayId(exchange);
        RequestBodies.GatewayUpdate change = Json.bind(exchange, RequestBodies.GatewayUpdate.class);
        Devices.Gateway gateway;
        try {
            gateway = devices.updateGateway(id, change.description(), change.sensors());
        } catch (Devices.UnknownSensors e) {
            throw unknown(change.sensors(), e);
        }
        if (gateway == null) {
            throw ApiProblem.notFound("gateway " + id);
        }
        Json.respond(exchange, 200, gateway);
    }

    public void deleteGateway(Exchange exchange) {
        String id = gatewayId(exchange);
        if (!devices.deleteGateway(id)) {
            throw ApiProblem.notFound("gateway " + id);
        }
        Json.respond(exchange, 204, null);
    }

    // --- credentials, of a sensor or of a gateway (the path says which)

    public void credentials(Exchange exchange) {
        DeviceLogin holder = holder(exchange);
        List<Devices.Credential> found = devices.credentials(holder);
        if (found == null) {
            throw notFound(holder);
        }
        Json.respond(exchange, 200, new ResponseBodies.Items<>(found));
    }

    public void createCredential(Exchange exchange) {
        DeviceLogin holder = holder(exchange);
        String asked = Json.header(exchange, "grace_seconds");
        // the contract has checked its range
        Duration graceOfOld = asked == null ? grace : Duration.ofSeconds(Long.parseLong(asked));
        Devices.NewCredential created = devices.createCredential(holder, graceOfOld);
        if (created == null) {
            throw notFound(holder);
        }
        Json.respond(exchange, 201, created);
    }

    public void revokeCredential(Exchange exchange) {
        DeviceLogin holder = holder(exchange);
        UUID id = Json.uuid(exchange, "credentialId", "credential");
        if (!devices.revokeCredential(holder, id)) {
            throw ApiProblem.notFound("credential " + id + " of " + holder);
        }
        Json.respond(exchange, 204, null);
    }

    private static DeviceLogin holder(Exchange exchange) {
        return Json.header(exchange, "gatewayId") != null ? DeviceLogin.ofGateway(gatewayId(exchange))
                : DeviceLogin.ofSensor(SensorsApi.sensorId(exchange));
    }

    private static ApiProblem notFound(DeviceLogin holder) {
        return ApiProblem.notFound(holder.gateway() ? "gateway " + holder.gatewayId() : "sensor " + holder.sensorId());
    }

    private static ApiProblem unknown(List<String> given, Devices.UnknownSensors e) {
        int index = given.indexOf(e.sensors.get(0));
        return ApiProblem.badRequest("sensors[" + index + "]", "sensors not registered: " + String.join(", ", e.sensors)
                + (e.sensors.size() == 10 ? ", …" : "") + "; a gateway reports only for registered sensors");
    }

    static String gatewayId(Exchange exchange) {
        String id = Json.header(exchange, "gatewayId");
        if (id == null || !DeviceLogin.GATEWAY_ID.matcher(id).matches()) {
            throw ApiProblem.badRequest("gatewayId", "a gateway id is 1 to 64 letters, digits, '-' and '_', "
                    + "beginning with a letter or digit");
        }
        return id;
    }
}
