/* A shared object without dwl_plugin_entry: not a dwload plugin. */
int not_a_plugin(void);
int not_a_plugin(void)
{
  return 42;
}
