module com.example.encapsulation {
    requires dev.locksmith.core;
}
