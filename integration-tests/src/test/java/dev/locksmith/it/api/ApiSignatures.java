package dev.locksmith.it.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public API of a compiled module as sorted text, one line per type and per public or
 * protected member, in the form {@code javac} would need to link against it (types, modifiers
 * that matter to callers and subclasses, generic signatures, thrown exceptions). Two such sets
 * tell an incompatible change (a line that disappeared: a member removed, or changed, which is a
 * removal plus an addition) from a compatible one (only new lines).
 */
final class ApiSignatures {

    private ApiSignatures() {}

    /**
     * The API of the classes under {@code root} (a directory or a jar): the packages its
     * {@code module-info.class} exports, or every package when it has none.
     */
    static Set<String> of(Path root, ClassLoader loader) {
        try (FileSystem jar = Files.isDirectory(root) ? null : FileSystems.newFileSystem(root)) {
            Path base = jar == null ? root : jar.getPath("/");
            Set<String> exported = exportedPackages(base);
            Set<String> lines = new TreeSet<>();
            try (Stream<Path> files = Files.walk(base)) {
                for (Path file :
                        files.filter(f -> f.toString().endsWith(".class")).toList()) {
                    String name = base.relativize(file).toString().replace('\\', '/');
                    if (name.equals("module-info.class") || name.endsWith("package-info.class") || name.contains("$")) {
                        continue;
                    }
                    String className =
                            name.substring(0, name.length() - ".class".length()).replace('/', '.');
                    String pkg = className.contains(".") ? className.substring(0, className.lastIndexOf('.')) : "";
                    if (exported == null || exported.contains(pkg)) {
                        describe(Class.forName(className, false, loader), lines);
                    }
                }
            }
            return lines;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Lines of {@code expected} missing from {@code actual}: what a user compiled against that is gone. */
    static List<String> removed(Set<String> expected, Set<String> actual) {
        return expected.stream().filter(line -> !actual.contains(line)).toList();
    }

    private static Set<String> exportedPackages(Path base) throws IOException {
        Path descriptor = base.resolve("module-info.class");
        if (!Files.exists(descriptor)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(descriptor)) {
            return ModuleDescriptor.read(in).exports().stream()
                    .filter(e -> !e.isQualified())
                    .map(ModuleDescriptor.Exports::source)
                    .collect(Collectors.toSet());
        }
    }

    private static void describe(Class<?> type, Set<String> lines) {
        if (!visible(type.getModifiers())) {
            return;
        }
        String owner = type.getName();
        List<String> supertypes = new ArrayList<>();
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class && !type.isEnum() && !type.isRecord()) {
            supertypes.add("extends " + superclass.getTypeName());
        }
        for (Type implemented : type.getGenericInterfaces()) {
            supertypes.add("implements " + implemented.getTypeName());
        }
        lines.add(owner + " | " + normalize(type.toGenericString())
                + (supertypes.isEmpty() ? "" : " " + String.join(" ", supertypes)));
        boolean subclassable = !Modifier.isFinal(type.getModifiers()) && !type.isEnum() && !type.isRecord();
        for (Constructor<?> c : type.getDeclaredConstructors()) {
            if (visible(c) && (Modifier.isPublic(c.getModifiers()) || subclassable)) {
                lines.add(owner + " | " + normalize(c.toGenericString()));
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (visible(m) && !m.isBridge()) {
                lines.add(owner + " | " + normalize(m.toGenericString()));
            }
        }
        for (Field f : type.getDeclaredFields()) {
            if (visible(f.getModifiers()) && !f.isSynthetic()) {
                lines.add(owner + " | " + normalize(f.toGenericString()));
            }
        }
        Arrays.stream(type.getDeclaredClasses()).forEach(nested -> describe(nested, lines));
    }

    private static boolean visible(Executable e) {
        return visible(e.getModifiers()) && !e.isSynthetic();
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    /**
     * Drops modifiers that do not change how callers link (synchronized, native, strictfp,
     * transient, volatile), and the ones only newer JDKs print: from JDK 22 on,
     * {@code Class.toGenericString()} also says {@code sealed} / {@code non-sealed}, which JDK 17
     * does not, and the record must read the same on every JDK the build runs on (17 and 25).
     */
    private static String normalize(String signature) {
        return signature.replaceAll("\\b(synchronized|native|strictfp|transient|volatile|sealed|non-sealed) ", "");
    }
}
