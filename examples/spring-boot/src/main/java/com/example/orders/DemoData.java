package com.example.orders;

import dev.locksmith.accounts.Account;
import dev.locksmith.accounts.Accounts;
import dev.locksmith.pool.ChannelAccountPool;
import java.util.List;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * At start-up, in one transaction: the demo accounts ({@code example.demo-accounts}) when there
 * are no accounts yet, and the channel accounts ({@code example.channel-accounts}) that are not
 * in the pool yet.
 */
@Component
class DemoData implements ApplicationRunner {

    private static final Logger LOG = LoggerFactory.getLogger(DemoData.class);

    private final DSLContext dsl;
    private final Accounts accounts;
    private final AccountList list;
    private final ChannelAccountPool pool;
    private final ExampleProperties properties;

    DemoData(
            DSLContext dsl,
            Accounts accounts,
            AccountList list,
            ChannelAccountPool pool,
            ExampleProperties properties) {
        this.dsl = dsl;
        this.accounts = accounts;
        this.list = list;
        this.pool = pool;
        this.properties = properties;
    }

    @Override
    @Transactional
    public void run(ApplicationArguments args) {
        if (!list.any()) {
            List<Account> opened = accounts.openAll(dsl, properties.demoAccounts());
            LOG.info(
                    "opened demo accounts {}",
                    opened.stream().map(a -> a.id() + ": " + a.balance()).toList());
        }
        int registered = pool.register(dsl, properties.channelAccounts());
        LOG.info("channel accounts {} in the pool ({} new)", properties.channelAccounts(), registered);
    }
}
