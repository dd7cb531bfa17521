import java.io.IOException;

import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system, except that every mode it sets goes through the configured umask
 * (fs.permissions.umask-mode), as HDFS does.
 *
 * Hadoop 2's RawLocalFileSystem chmods each file it creates to the mode its caller passes, and
 * HBase creates its write-ahead logs with the default 0666: under a state dir that holds logged
 * visitor IPs those files would be open to every user. The dev HBase's site config names this
 * class as fs.file.impl.
 */
public class BeaconPrivateLocalFileSystem extends LocalFileSystem {
  public BeaconPrivateLocalFileSystem() {
    super(new UmaskedRawLocalFileSystem());
  }

  /** Sets each mode, a created file's or folder's included, minus the umask. */
  static class UmaskedRawLocalFileSystem extends RawLocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      super.setPermission(p, permission.applyUMask(FsPermission.getUMask(getConf())));
    }
  }
}
