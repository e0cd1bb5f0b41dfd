package io.lockwatch;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class LockwatchApplication {
    public static void main(String[] args) {
        SpringApplication.run(LockwatchApplication.class, args);
    }
}
