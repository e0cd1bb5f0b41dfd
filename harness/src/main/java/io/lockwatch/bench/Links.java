package io.lockwatch.bench;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The benchmark's clients and their links: client {@code c} (0-based) has the id {@link #clientId(int)} and is
 * linked to the sensors {@code (c * perClient + j) mod sensors} for {@code j < perClient}, the same formula
 * {@link BenchDatabase#registerClientsAndLinks} inserts with. With {@code clients * perClient = k * sensors}
 * every sensor has exactly {@code k} clients.
 */
final class Links {

    private final int clients;
    private final int[][] clientsOfSensor;
    private final List<String> secrets = new ArrayList<>();

    Links(int clients, int perClient, int sensors) {
        if (perClient > sensors) {
            throw new IllegalArgumentException("--links must not exceed --sensors");
        }
        this.clients = clients;
        int[] counts = new int[sensors];
        for (int c = 0; c < clients; c++) {
            for (int j = 0; j < perClient; j++) {
                counts[sensor(c, j, perClient, sensors)]++;
            }
        }
        clientsOfSensor = new int[sensors][];
        for (int s = 0; s < sensors; s++) {
            clientsOfSensor[s] = new int[counts[s]];
            counts[s] = 0;
        }
        for (int c = 0; c < clients; c++) {
            for (int j = 0; j < perClient; j++) {
                int s = sensor(c, j, perClient, sensors);
                clientsOfSensor[s][counts[s]++] = c;
            }
        }
        SecureRandom random = new SecureRandom();
        for (int c = 0; c < clients; c++) {
            byte[] key = new byte[32];
            random.nextBytes(key);
            secrets.add("whsec_" + Base64.getEncoder().encodeToString(key));
        }
    }

    private static int sensor(int client, int j, int perClient, int sensors) {
        return (int) (((long) client * perClient + j) % sensors);
    }

    static String clientId(int client) {
        return String.format("6c6f636b-7761-7463-6800-%012x", client);
    }

    int clients() {
        return clients;
    }

    List<String> ids() {
        List<String> ids = new ArrayList<>(clients);
        for (int c = 0; c < clients; c++) {
            ids.add(clientId(c));
        }
        return ids;
    }

    List<String> secrets() {
        return secrets;
    }

    int[] clientsOf(int sensor) {
        return clientsOfSensor[sensor];
    }

    boolean linked(int client, int sensor) {
        for (int c : clientsOfSensor[sensor]) {
            if (c == client) {
                return true;
            }
        }
        return false;
    }
}
