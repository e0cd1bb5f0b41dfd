package io.lockwatch.ingest;

/**
 * What a device reports of itself beside its door, each null when the reading does not say: kept as the sensor's
 * health, never a change of its door and never a notification by itself.
 *
 * @param battery percent, 0 to 100
 * @param tamper  true while the cover is open or the sensor is off its mount
 * @param rssi    received signal strength, dBm (-200 to 0)
 * @param snr     signal-to-noise ratio, dB (-50 to 50)
 */
public record DeviceHealth(Double battery, Boolean tamper, Integer rssi, Double snr) {

    static final int SNR_LIMIT = 50;
    static final int RSSI_MIN = -200;

    public boolean hasSignal() {
        return rssi != null || snr != null;
    }

    /**
     * A battery or SNR kept in a real (4-byte) column, as the device said it: 9.8, not the float's widening to
     * 9.800000190734863.
     */
    public static Double asSaid(float kept) {
        return Double.valueOf(Float.toString(kept));
    }
}
